"""The entmax family (the sparse-mapping playground): router, requests, service, figures."""
