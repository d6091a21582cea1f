"""The resources' typed inputs survive the wire: what the program sends (`to_props`, a protobuf Struct) is what the
provider reads back (`from_props` of the decoded Struct), numbers and missing values included."""

from __future__ import annotations

from google.protobuf.json_format import MessageToDict

from teton.deploy.inputs import Deployment, GateInputs, HostRackInputs, SubnetManagerInputs, SwitchInputs
from teton.deploy.registrar import to_struct

WHERE = Deployment(transport="twin", twin="lab", cluster="lab")


def wire(props):
    return MessageToDict(to_struct(props), preserving_proto_field_name=True)


def test_every_resource_input_reads_back_as_it_was_sent():
    records = [
        SwitchInputs(device="z01-r001-rtsw", nos="sonic", files={"frr.conf": "a\n"}, deployment=WHERE, role="rtsw",
                     wave=3, mgmt=None, rack="z01-r001"),
        HostRackInputs(rack="z01-r001", hosts=("h1", "h2"), files={"hosts/h1.yml": "x"}, deployment=WHERE,
                       playbooks="abc"),
        GateInputs(wave=2, name="rtsw-01", devices=("a", "b"), digest="d", deployment=WHERE,
                   nos_of={"a": "sonic", "b": "eos"}, mgmt_of={"a": "10.0.0.1", "b": None}),
        SubnetManagerInputs(files={"opensm.conf": "y"}, hosts=("sm1",), deployment=Deployment(transport="live"),
                            config_dir="/etc/opensm"),
    ]
    for record in records:
        props = wire(record.to_props())
        assert type(record).from_props(props) == record
    assert isinstance(wire(records[0].to_props())["wave"], float)     # Struct numbers are floats on the wire


def test_the_keys_are_the_states():
    sw = SwitchInputs(device="d", nos="eos", files={}, deployment=WHERE).to_props()
    assert list(sw) == ["device", "nos", "role", "wave", "mgmt", "rack", "files", "transport", "twin", "cluster"]
    gate = GateInputs(wave=0, name="n", devices=(), digest="", deployment=WHERE).to_props()
    assert list(gate) == ["wave", "name", "devices", "digest", "nos_of", "mgmt_of", "transport", "twin", "cluster"]


def test_a_gate_without_a_name_is_named_by_its_wave():
    assert GateInputs.from_props({"wave": 4.0}).name == "4"
