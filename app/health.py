"""Probes for load balancers and orchestrators: /healthz (the process answers) and /readyz
(every served model — the families' SERVED tables and the reference files — is loaded and
verified).

/healthz is a coroutine: it runs on the event loop and never waits for a thread of the pool
the models run in, so it stays fast while every model thread is busy. /readyz reads the
registry's state in a pool thread (it may load a checkpoint that appeared since start-up).
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app.registry import Registry

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str = Field(description="always `ok` when the process answers")


class Readiness(BaseModel):
    status: str = Field(
        description="`ready`; `degraded` when a served model is unavailable; `no models` "
        "when the manifest is missing, unreadable or empty"
    )
    loaded: list[str] = Field(description="served models loaded and verified against the manifest")
    unavailable: dict[str, str] = Field(description="model -> why it cannot be served")
    manifest: str | None = Field(
        description="why checkpoints/manifest.json cannot be used; null when it can"
    )


@router.get("/healthz", response_model=Health)
@router.head("/healthz", include_in_schema=False)
async def healthz() -> Health:
    """Liveness: the process is up and its event loop answers. Pages render even when models
    are missing, so this says nothing about them (see /readyz)."""
    return Health(status="ok")


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "a served model is unavailable"}},
)
@router.head("/readyz", include_in_schema=False)
def readyz(registry: Registry) -> JSONResponse:
    """Readiness: 200 when every served model loaded (sha256 verified); else 503 saying which
    did not and why. A degraded replica still serves pages and its other models, but a load
    balancer should prefer a ready one."""
    problem = registry.manifest_problem()
    loaded, unavailable = registry.readiness()
    if problem is None and not registry.manifest():
        problem = "checkpoints/manifest.json lists no models"
    if problem is not None:
        status = "no models"
    else:
        status = "degraded" if unavailable else "ready"
    readiness = Readiness(status=status, loaded=loaded, unavailable=unavailable, manifest=problem)
    if status == "ready":
        return JSONResponse(readiness.model_dump())
    # a served model missing is not fixed by retrying soon: a restart or a deploy fixes it
    return JSONResponse(readiness.model_dump(), status_code=503, headers={"Retry-After": "60"})
