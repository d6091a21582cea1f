"""`teton verify`: the whole cluster's routing proven from a build's rendered switch configs (docs/verify.md)."""
