"""Request and response models per area: the API contract, with its limits."""
