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
PYTHON_SPEC_STDERR_TAIL = 2000        # characters of a failed Python spec's stderr quoted in its finding
MAX_SCHEMA_FINDINGS = 200             # schema findings listed for one spec (the rest are counted)
MAX_PORTS_PER_MODEL = 4096            # front-panel ports of one switch model (a 7816R3 has 576)
MAX_PORT_GROUPS = 64                  # port groups of one switch model
MAX_SWITCH_MODELS = 256               # entries under switch_models:
MAX_SLOTS = 64                        # line-card slots of one modular switch model
MAX_STORAGE_RACKS = 10_000            # racks of one storage entry
MAX_SERVERS_PER_RACK = 64             # storage servers per storage rack
MAX_NICS_PER_SERVER = 16              # front-end NICs of one storage server
MAX_FSW_PER_ZONE = 256                # front-end fabric switches per zone
MAX_SSW_PER_PLANE = 64                # front-end spine switches per plane
MAX_SHARES = 64                       # shares of one storage group
MAX_SERVICE_HOSTS = 16                # service hosts (one service rack)
MAX_PARALLEL_LINKS = 64               # parallel links between two switches (uplinks_per_fsw/_ctsw/_atsw)
MAX_CTSW_PER_ZONE = 1024              # CTSWs (spine planes) per zone
MAX_ATSW = 1024                       # aggregation switches of one cluster
MAX_BAG = 1024                        # backend aggregation switches of one site
MAX_SITE_CLUSTERS = 64                # clusters of one site (named and room for more)
MAX_PER_HOST = 64                     # GPUs, backend NICs and front-end NICs of one GPU server
MAX_MANAGEMENT_ENTRIES = 64           # entries of each list under management: (prefixes, NTP/syslog/AAA servers)
MAX_DEVICES = 250_000                 # devices (switches, hosts, storage servers) of one cluster
MAX_LINKS = 2_000_000                 # links of one cluster
MAX_PARTITIONS = 1024                 # InfiniBand partitions (P_Keys) of one cluster
MAX_PARTITION_HOSTS = 100_000         # hosts named in one InfiniBand partition
MAX_GUID_MAP_BYTES = 32 << 20         # an InfiniBand GUID map file (the 24k cluster's is about 1.5 MB)
