"""Every model in the OpenAPI document has a name of its own.

FastAPI falls back to module-qualified names (`app__pointer__requests__ModelInfo`) when two
response or request classes share a name, which is what a client's code generator then prints.
"""

from __future__ import annotations

from app.main import create_app


def test_no_two_api_models_share_a_class_name() -> None:
    schemas = create_app().openapi()["components"]["schemas"]
    assert {"PointerModelInfo", "Seq2SeqModelInfo"} <= set(schemas)
    assert [name for name in schemas if "__" in name] == []
