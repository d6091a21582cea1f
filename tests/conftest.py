from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.helpers import LAB
from teton.design import design
from teton.fabric import Fabric
from teton.pipeline import Designed
from teton.spec.load import load_spec
from teton.spec.model import Cluster

ROOT_NEEDED_FOR = "network namespaces and FRR daemons"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `root` (optionally with what they need root for: `@pytest.mark.root("mounting a tmpfs")`) skip
    here, in one place, when not run as root; the reason says why (`-rs` in addopts prints it).  CI runs as root."""
    if os.geteuid() == 0:
        return
    for item in items:
        marker = item.get_closest_marker("root")
        if marker is not None:
            why = marker.args[0] if marker.args else ROOT_NEEDED_FOR
            item.add_marker(pytest.mark.skip(reason=f"needs root: {why}"))


@pytest.fixture(scope="session", autouse=True)
def _render_cache_of_the_session(tmp_path_factory):
    """`teton render` and `teton diff` use a render cache: tests get their own, never the user's (nor its key)."""
    import os
    import secrets

    before = os.environ.get("TETON_CACHE_DIR")
    key = os.environ.get("TETON_CACHE_KEY")
    os.environ["TETON_CACHE_DIR"] = str(tmp_path_factory.mktemp("render-cache"))
    os.environ["TETON_CACHE_KEY"] = secrets.token_hex(32)
    yield
    if key is None:
        os.environ.pop("TETON_CACHE_KEY", None)
    else:
        os.environ["TETON_CACHE_KEY"] = key
    if before is None:
        os.environ.pop("TETON_CACHE_DIR", None)
    else:
        os.environ["TETON_CACHE_DIR"] = before


@pytest.fixture(scope="session")
def lab_cluster() -> Cluster:
    return load_spec(LAB)


@pytest.fixture(scope="session")
def lab_fabric(lab_cluster: Cluster) -> Fabric:
    return design(lab_cluster)


@pytest.fixture
def lab_data() -> dict:
    """The lab spec as plain data, for tests that break it on purpose."""
    return yaml.safe_load(LAB.read_text())


@pytest.fixture(scope="session")
def lab_build(tmp_path_factory, lab_fabric: Fabric):
    """The lab rendered once per test session through the one build path (read-only: copy it before breaking it)."""
    from teton.pipeline import build_fabric

    return build_fabric(lab_fabric, tmp_path_factory.mktemp("build") / "lab").path


@pytest.fixture(scope="session")
def roce24k() -> Designed:
    """The 24k RoCE reference loaded, checked and designed once per session (a frozen Fabric: read-only)."""
    from tests.helpers import REF24K
    from teton.pipeline import load_and_design

    return load_and_design(REF24K)


@pytest.fixture(scope="session")
def roce24k_cache(tmp_path_factory):
    """One render cache for the session's renders of the 24k RoCE reference and of its copies (tests/diff): each
    device is rendered once, whichever test asks first."""
    from teton.pipeline.cache import RenderCache

    return RenderCache(tmp_path_factory.mktemp("cache-24k"))


@pytest.fixture(scope="session")
def roce24k_network_build(tmp_path_factory, roce24k, roce24k_cache) -> tuple[Fabric, Path]:
    """The 24k RoCE reference's whole build (every target: the switch configs, fabric.json, the cabling, monitoring
    ...), rendered once per session for the scale24k tests that read it (read-only: copy before changing), its
    devices through the session's cache."""
    from teton.pipeline import build_fabric

    fabric = roce24k.fabric
    return fabric, build_fabric(fabric, tmp_path_factory.mktemp("build") / "roce24k", cache=roce24k_cache).path


@pytest.fixture(scope="session")
def ib24k_network_build(tmp_path_factory) -> Path:
    """The 24k InfiniBand reference's Ethernet switch configs (its front end) and fabric.json, rendered once per
    session (read-only)."""
    from tests.helpers import INVENTORY
    from teton.pipeline import build_fabric, load_and_design

    fabric = load_and_design(INVENTORY / "reference-ib-24k.yaml").fabric
    return build_fabric(fabric, tmp_path_factory.mktemp("build") / "ib24k", only=("sonic", "eos", "fabric")).path


@pytest.fixture(scope="session")
def lab_ib_fabric() -> Fabric:
    from tests.helpers import INVENTORY

    return design(load_spec(INVENTORY / "lab-ib.yaml"), INVENTORY)


@pytest.fixture(scope="session")
def lab_ib_build(tmp_path_factory, lab_ib_fabric: Fabric):
    """The InfiniBand lab rendered once per test session (read-only)."""
    from teton.pipeline import build_fabric

    return build_fabric(lab_ib_fabric, tmp_path_factory.mktemp("build") / "lab-ib").path


@pytest.fixture(scope="session")
def lab_dcqcn_fabric(tmp_path_factory) -> Fabric:
    """The lab's DCQCN variant: the same cluster with ECN on (tests.helpers.dcqcn)."""
    from tests.helpers import dcqcn, write_spec

    spec = write_spec(tmp_path_factory.mktemp("spec"), dcqcn(yaml.safe_load(LAB.read_text())), "lab.yaml")
    return design(load_spec(spec))


@pytest.fixture(scope="session")
def lab_dcqcn_build(tmp_path_factory, lab_dcqcn_fabric: Fabric):
    """The DCQCN variant rendered once per test session (read-only)."""
    from teton.pipeline import build_fabric

    return build_fabric(lab_dcqcn_fabric, tmp_path_factory.mktemp("build") / "lab-dcqcn").path
