"""The seq2seq family (inflection, translation): router, requests, service, labels."""
