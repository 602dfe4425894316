"""A QR code for a link the client shows, so a phone can open it by camera
("continue on another device").  The text travels in the body, never in a
URL: a move link holds a secret, and request lines are logged."""

from __future__ import annotations

import segno
from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from app.api.doors import LOOKUPS, limited

router = APIRouter(prefix="/api", tags=["qr"])


class QrText(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: a link of this server: the origin, /r/{code} and a #claim secret
    text: str = Field(min_length=1, max_length=400)


class QrImage(BaseModel):
    #: an SVG image as a data: URI (the page's policy allows images from data:)
    svg: str


@router.post("/qr", response_model=QrImage, dependencies=[limited(LOOKUPS)])
async def qr_code(body: QrText) -> QrImage:
    """Counted with room lookups: it is cheap, but not free."""
    code = segno.make(body.text, error="m", micro=False)
    return QrImage(svg=code.svg_data_uri(scale=4, border=2))
