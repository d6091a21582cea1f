"""A site of clusters: a site spec's clusters, each designed as today plus its attachment to the site's backend
aggregation tier, the tier's own build, the checks across clusters, and the site's merged view the twin and
`teton verify` run over (docs/site.md)."""
