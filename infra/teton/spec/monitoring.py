"""The spec's monitoring section (`monitoring:`): the thresholds and durations of the alerts teton renders from the
design (`teton.targets.monitoring`, docs/monitoring.md), and where the exporters listen.

Every field has a default with its reason in docs/monitoring.md (the figures from Meta's SIGCOMM 2024 paper and
NVIDIA's DCGM documentation, the rest marked as teton's choice there).  Durations are whole seconds and multiples
of `evaluation_interval_s`: Prometheus checks a rule only at each evaluation, so a `for:` between two evaluations
means the next one, and the rendered unit tests (`promtool test rules`) hold each alert to its exact duration.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from teton.spec.base import SpecModel


class Monitoring(SpecModel):
    scrape_interval_s: int = Field(default=10, ge=1, le=300, description="how often Prometheus scrapes every "
                                   "exporter (its global scrape_interval)")
    evaluation_interval_s: int = Field(default=10, ge=1, le=300, description="how often the rules are evaluated "
                                       "(its global evaluation_interval); every duration below is a multiple")
    link_down_for_s: int = Field(default=20, ge=0, le=3600, description="a designed link end down (or unobserved) "
                                 "this long raises TetonLinkDown")
    bgp_down_for_s: int = Field(default=20, ge=0, le=3600, description="a designed BGP session not Established (or "
                                "absent) this long raises TetonBgpSessionDown")
    link_flaps: int = Field(default=3, ge=1, le=1000, description="this many flaps (down and up again) of one port "
                            "within link_flap_window_s raise TetonLinkFlapping; 3 is what the design's dampening "
                            "holds a backend link down after")
    link_flap_window_s: int = Field(default=600, ge=20, le=86400)
    port_errors: int = Field(default=10, ge=0, le=10**9, description="more errored frames than this on one port "
                             "within port_error_window_s raise TetonPortErrors (the rails' NICs included)")
    port_error_window_s: int = Field(default=300, ge=20, le=86400)
    pfc_storm_window_s: int = Field(default=300, ge=20, le=86400, description="TetonPfcWatchdogStorm stays up this "
                                    "long after the watchdog last acted on the lossless priority")
    pfc_pause_percent: int = Field(default=20, ge=1, le=100, description="the lossless priority paused more than this "
                                   "share of the time raises TetonPfcPauseHigh")
    pfc_pause_window_s: int = Field(default=60, ge=20, le=3600)
    pfc_pause_for_s: int = Field(default=60, ge=0, le=3600)
    buffer_percent: int = Field(default=80, ge=1, le=100, description="a shared buffer pool fuller than this raises "
                                "TetonBufferOccupancyHigh (Meta alerts at 80 % on its rack switches)")
    buffer_for_s: int = Field(default=30, ge=0, le=3600)
    ecn_mark_percent: int = Field(default=10, ge=1, le=100, description="where the design marks ECN: more than this "
                                  "share of the lossless queue's packets marked raises TetonEcnMarkingHigh")
    ecn_window_s: int = Field(default=300, ge=20, le=3600)
    ecn_for_s: int = Field(default=300, ge=0, le=3600)
    optics_margin_db: float = Field(default=0.0, ge=0, le=10, description="alert this many dB inside the module's own "
                                    "receive-power warning thresholds")
    optics_for_s: int = Field(default=60, ge=0, le=3600)
    mount_for_s: int = Field(default=60, ge=0, le=3600, description="a designed storage mount of a host missing or "
                             "erroring this long raises TetonStorageMountDown")
    row_remap_for_s: int = Field(default=0, ge=0, le=3600)
    exporter_down_for_s: int = Field(default=60, ge=0, le=3600)
    design_missing_for_s: int = Field(default=300, ge=0, le=86400, description="no designed series at all this long "
                                      "(the textfile not loaded) raises TetonDesignNotLoaded")
    node_exporter_port: int = Field(default=9100, ge=1, le=65535)
    frr_exporter_port: int = Field(default=9342, ge=1, le=65535)
    dcgm_exporter_port: int = Field(default=9400, ge=1, le=65535)
    designed_at: str = Field(default="localhost:9100", pattern=r"^[A-Za-z0-9.:\[\]-]{1,253}:[0-9]{1,5}$",
                             description="host:port of the node-exporter whose textfile collector serves "
                                         "monitoring/designed/ (on the Prometheus host)")
    gnmi_collector_at: str = Field(default="localhost:9804", pattern=r"^[A-Za-z0-9.:\[\]-]{1,253}:[0-9]{1,5}$",
                                   description="host:port where the gNMI collector exports the switches' counters "
                                               "under teton's metric names")
    test_sample: int = Field(default=4, ge=1, le=64, description="sessions and links of each kind the rendered unit "
                             "tests exercise (a fixed sample)")

    @model_validator(mode="after")
    def _durations_fit_the_evaluation(self) -> Monitoring:
        step = self.evaluation_interval_s
        wrong = [name for name, value in self.durations().items() if value % step]
        if wrong:
            raise ValueError(f"{', '.join(wrong)}: every duration must be a multiple of evaluation_interval_s "
                             f"({step} s): a rule is only checked at each evaluation")
        short = [name for name, value in self.windows().items() if value < 2 * self.scrape_interval_s]
        if short:
            raise ValueError(f"{', '.join(short)}: a window must hold at least two scrapes "
                             f"(2 x scrape_interval_s = {2 * self.scrape_interval_s} s)")
        return self

    def windows(self) -> dict[str, int]:
        return {k: v for k, v in self.model_dump().items() if k.endswith("_window_s")}

    def durations(self) -> dict[str, int]:
        return {k: v for k, v in self.model_dump().items() if k.endswith(("_for_s", "_window_s"))}
