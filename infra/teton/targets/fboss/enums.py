"""The enum values the FBOSS configs use, as the pinned IDL numbers them (SimpleJSON writes enums as integers).

`ENUMS` names each constant's enum and value name; tests/targets/test_fboss.py checks every one against the IDL, so a
renumbering upstream is caught rather than written.
"""

from __future__ import annotations

# switch_config.PortState, PortType, ParserType, SpanningTreeState, InterfaceType, StreamType, QueueScheduling
DISABLED, ENABLED = 1, 2
INTERFACE_PORT = 0
L3, L4 = 1, 2
FORWARDING = 2
INTF_VLAN = 1
UNICAST = 0
WRR, STRICT, DRR = 0, 1, 2
# LLDPTag
LLDP_PORT, LLDP_SYSTEM_NAME = 2, 5
# PfcWatchdogRecoveryAction, QueueCongestionBehavior, MMUScalingFactor
WD_NO_DROP, WD_DROP = 0, 1
AQM_EARLY_DROP, AQM_ECN = 0, 1
SCALE_ONE, SCALE_EIGHT = 0, 1
# PacketRxReason
RX_UNMATCHED, RX_ARP, RX_DHCP, RX_L3_DEST_MISS, RX_TTL_1, RX_CPU_IS_NHOP, RX_NDP, RX_LLDP = 0, 1, 2, 5, 6, 7, 8, 9
RX_ARP_RESPONSE, RX_BGP, RX_BGPV6, RX_LACP, RX_L3_MTU_ERROR, RX_DHCPV6 = 10, 11, 12, 13, 14, 17
# LoadBalancerID, HashingAlgorithm, IPv4Field/IPv6Field, TransportField
LB_ECMP = 1
CRC16_CCITT = 1
SRC_ADDR, DST_ADDR, FLOW_LABEL = 1, 2, 3
SRC_PORT, DST_PORT = 1, 2
# UdfBaseHeaderType, UdfGroupType, UdfMatchL2Type, UdfMatchL3Type, UdfMatchL4Type
UDF_L4_HEADER = 3
UDF_HASH = 0
UDF_L2_ETH, UDF_L3_ANY, UDF_L4_UDP = 1, 0, 1
# bgp_policy: FlowControlAction, BgpPolicyAtomicMatchType, BgpAttrChangeActionType; routing_policy
ACCEPT, DENY = 1, 2
MATCH_PREFIX_LIST, MATCH_ALWAYS = 5, 20
AS_PATH_PREPEND = 1
BOOL_AND, BOOL_OR = 1, 2
MATCH_EQUAL = 0
CMP_EQ, CMP_GE, CMP_LE = 1, 2, 3
IPV4, IPV6 = 1, 2
DRAIN_UNDRAINED = 0

ENUMS: dict[str, tuple[str, str]] = {
    "DISABLED": ("switch_config.PortState", "DISABLED"), "ENABLED": ("switch_config.PortState", "ENABLED"),
    "INTERFACE_PORT": ("switch_config.PortType", "INTERFACE_PORT"),
    "L3": ("switch_config.ParserType", "L3"), "L4": ("switch_config.ParserType", "L4"),
    "FORWARDING": ("switch_config.SpanningTreeState", "FORWARDING"),
    "INTF_VLAN": ("switch_config.InterfaceType", "VLAN"), "UNICAST": ("switch_config.StreamType", "UNICAST"),
    "WRR": ("switch_config.QueueScheduling", "WEIGHTED_ROUND_ROBIN"),
    "STRICT": ("switch_config.QueueScheduling", "STRICT_PRIORITY"),
    "DRR": ("switch_config.QueueScheduling", "DEFICIT_ROUND_ROBIN"),
    "LLDP_PORT": ("switch_config.LLDPTag", "PORT"), "LLDP_SYSTEM_NAME": ("switch_config.LLDPTag", "SYSTEM_NAME"),
    "WD_NO_DROP": ("switch_config.PfcWatchdogRecoveryAction", "NO_DROP"),
    "WD_DROP": ("switch_config.PfcWatchdogRecoveryAction", "DROP"),
    "AQM_EARLY_DROP": ("switch_config.QueueCongestionBehavior", "EARLY_DROP"),
    "AQM_ECN": ("switch_config.QueueCongestionBehavior", "ECN"),
    "SCALE_ONE": ("switch_config.MMUScalingFactor", "ONE"), "SCALE_EIGHT": ("switch_config.MMUScalingFactor", "EIGHT"),
    **{f"RX_{n}": ("switch_config.PacketRxReason", n) for n in (
        "UNMATCHED", "ARP", "DHCP", "L3_DEST_MISS", "TTL_1", "CPU_IS_NHOP", "NDP", "LLDP", "ARP_RESPONSE", "BGP",
        "BGPV6", "LACP", "L3_MTU_ERROR", "DHCPV6")},
    "LB_ECMP": ("switch_config.LoadBalancerID", "ECMP"),
    "CRC16_CCITT": ("switch_config.HashingAlgorithm", "CRC16_CCITT"),
    "SRC_ADDR": ("switch_config.IPv6Field", "SOURCE_ADDRESS"), "DST_ADDR": ("switch_config.IPv6Field",
                                                                           "DESTINATION_ADDRESS"),
    "FLOW_LABEL": ("switch_config.IPv6Field", "FLOW_LABEL"),
    "SRC_PORT": ("switch_config.TransportField", "SOURCE_PORT"),
    "DST_PORT": ("switch_config.TransportField", "DESTINATION_PORT"),
    "UDF_L4_HEADER": ("switch_config.UdfBaseHeaderType", "UDF_L4_HEADER"),
    "UDF_HASH": ("switch_config.UdfGroupType", "HASH"),
    "UDF_L2_ETH": ("switch_config.UdfMatchL2Type", "UDF_L2_PKT_TYPE_ETH"),
    "UDF_L3_ANY": ("switch_config.UdfMatchL3Type", "UDF_L3_PKT_TYPE_ANY"),
    "UDF_L4_UDP": ("switch_config.UdfMatchL4Type", "UDF_L4_PKT_TYPE_UDP"),
    "ACCEPT": ("bgp_policy.FlowControlAction", "ACCEPT"), "DENY": ("bgp_policy.FlowControlAction", "DENY"),
    "MATCH_PREFIX_LIST": ("bgp_policy.BgpPolicyAtomicMatchType", "PREFIX_LIST"),
    "MATCH_ALWAYS": ("bgp_policy.BgpPolicyAtomicMatchType", "ALWAYS"),
    "AS_PATH_PREPEND": ("bgp_policy.BgpAttrChangeActionType", "AS_PATH_PREPEND"),
    "BOOL_AND": ("routing_policy.BooleanOperator", "AND"), "BOOL_OR": ("routing_policy.BooleanOperator", "OR"),
    "MATCH_EQUAL": ("routing_policy.MatchValueLogicOperator", "EQUAL"),
    "CMP_EQ": ("routing_policy.ComparisonOperator", "EQ"), "CMP_GE": ("routing_policy.ComparisonOperator", "GE"),
    "CMP_LE": ("routing_policy.ComparisonOperator", "LE"),
    "IPV4": ("routing_policy.IPVersion", "V4"), "IPV6": ("routing_policy.IPVersion", "V6"),
    "DRAIN_UNDRAINED": ("bgp_policy.DrainState", "UNDRAINED"),
}
