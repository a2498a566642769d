"""Probes for load balancers and orchestrators: /healthz (the process answers) and /readyz
(every model in checkpoints/manifest.json is loaded and verified)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str = Field(description="always `ok` when the process answers")


class Readiness(BaseModel):
    status: str = Field(description="`ready`, or `degraded` when a model is unavailable")
    loaded: list[str] = Field(description="models loaded and verified against the manifest")
    unavailable: dict[str, str] = Field(description="model -> why it cannot be served")


@router.get("/healthz", response_model=Health)
@router.head("/healthz", include_in_schema=False)
def healthz() -> Health:
    """Liveness: the process is up and serving. Pages render even when models are missing."""
    return Health(status="ok")


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "a manifest model is unavailable"}},
)
def readyz(request: Request) -> JSONResponse:
    """Readiness: 200 when every manifest model loaded (sha256 verified), else 503 with the
    ones that did not and why. A degraded replica still serves pages and the other models."""
    loaded, unavailable = request.app.state.registry.readiness()
    readiness = Readiness(
        status="degraded" if unavailable else "ready", loaded=loaded, unavailable=unavailable
    )
    return JSONResponse(readiness.model_dump(), status_code=503 if unavailable else 200)
