"""Bounds on everything that sizes work, so that no spec (careless or hostile) can exhaust the machine.

Every error that a limit causes names the limit (its constant here) and its value.  The bounds are far above any real
cluster: the 24k reference has 7,512 devices and 66,368 links; a 4x copy (98,304 GPUs) about 30,000 and 265,000.
"""

from __future__ import annotations

MAX_SPEC_BYTES = 4 * 1024 * 1024      # a spec file on disk
MAX_YAML_NODES = 200_000              # YAML nodes after alias expansion (a "billion laughs" file blows past it)
MAX_YAML_DEPTH = 64                   # nesting of mappings and sequences in a spec
PYTHON_SPEC_TIMEOUT_S = 60.0          # wall time a Python spec may run (TETON_SPEC_TIMEOUT overrides)
PYTHON_SPEC_MEMORY_BYTES = 4 << 30    # address space of the child process that runs a Python spec
MAX_PORTS_PER_MODEL = 4096            # front-panel ports of one switch model (a 7816R3 has 576)
MAX_PORT_GROUPS = 64                  # port groups of one switch model
MAX_SWITCH_MODELS = 256               # entries under switch_models:
MAX_DEVICES = 250_000                 # devices (switches, hosts, storage servers) of one cluster
MAX_LINKS = 2_000_000                 # links of one cluster
