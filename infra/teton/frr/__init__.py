"""FRR as a library: what teton knows about FRR, below the targets so that targets, the twin and deploy share it.

- `teton.frr.policy`: the route-policy layout (LOCAL_/ORIGINATE_/CONNECTED_/EXPORT_ names and sequence numbers) as
  data; the FRR spelling (`teton.targets.frr`) and the EOS one (`teton.targets.eos.structured`) both read it.
- `teton.frr.conf`: parsing an integrated frr.conf (its `router bgp`, its split per daemon) and a daemon's log.
- `teton.frr.vty`: a daemon's vty socket (show commands, ~1 ms each) and the parsing of ``show bgp summary json``.
- `teton.frr.vtysh`: vtysh and frr-reload: the running config, a reload, the offline delta of two configs.
"""
