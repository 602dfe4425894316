"""The client is served with its build id (app/api/client.py): the page names
every file under /b/<id>/, those addresses are cached for good, the page and
plain paths are asked about again, and every answer and a socket's welcome
say which build the server runs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from fastapi.testclient import TestClient

from app.api.client import IMMUTABLE, NOT_OURS, REVALIDATE, build_id
from app.core.config import Settings
from app.main import STATIC_DIR, create_app
from app.store.records import MemoryRecords
from tests.api.client import create
from tests.api.conftest import OPEN_DOORS

STAMPED = re.compile(r'(?:src|href)="(/b/([0-9a-f]+)/[^"]+)"')


def stamped(page: str) -> list[tuple[str, str]]:
    return STAMPED.findall(page)


def test_the_page_names_its_files_under_the_build_and_they_are_kept_for_good(
    client: TestClient,
) -> None:
    build = build_id(STATIC_DIR)
    for path in ("/", "/r/ABCD2345EFGH", "/index.html"):
        page = client.get(path)
        assert page.status_code == 200 and page.headers["cache-control"] == REVALIDATE
        assert page.headers["x-build"] == build
        found = stamped(page.text)
        # the entry module and every stylesheet; nothing left at a plain path
        assert {url.split("/", 3)[3] for url, _ in found} >= {"js/main.js", "css/app.css"}
        assert {stamp for _, stamp in found} == {build}
        assert 'src="/js/' not in page.text and 'href="/css/' not in page.text
    for url, _ in stamped(client.get("/").text):
        r = client.get(url)
        assert r.status_code == 200, url
        assert r.headers["cache-control"] == IMMUTABLE
    # a module the entry imports (relative paths resolve under the same stamp)
    net = client.get(f"/b/{build}/js/net.js")
    assert net.status_code == 200 and net.headers["cache-control"] == IMMUTABLE
    assert net.content == (STATIC_DIR / "js" / "net.js").read_bytes()


def test_plain_paths_and_other_builds_are_never_kept_as_this_build(client: TestClient) -> None:
    plain = client.get("/js/net.js")
    assert plain.status_code == 200 and plain.headers["cache-control"] == REVALIDATE
    other = client.get("/b/000000000000/js/net.js")  # an old tab's address
    assert other.status_code == 200 and other.headers["cache-control"] == NOT_OURS
    assert client.get(f"/b/{build_id(STATIC_DIR)}/js/nothing.js").status_code == 404
    assert client.get("/api/health").headers["x-build"] == build_id(STATIC_DIR)


def test_any_change_to_the_client_is_another_build(tmp_path: Path) -> None:
    root = tmp_path / "static"
    shutil.copytree(STATIC_DIR, root)
    before = build_id(root)
    assert before == build_id(STATIC_DIR)  # the same bytes, wherever they are
    css = root / "css" / "app.css"
    css.write_text(css.read_text() + "\n/* upgraded */\n")
    after = build_id(root)
    assert after != before
    (root / "css" / "app.css").rename(root / "css" / "moved.css")
    assert build_id(root) not in (before, after)  # a path counts, not only bytes
    settings = Settings(static_dir=root, **OPEN_DOORS)
    with TestClient(create_app(settings, MemoryRecords())) as c:
        page = c.get("/")
        assert {stamp for _, stamp in stamped(page.text)} == {build_id(root)}
        assert c.get("/api/health").headers["x-build"] == build_id(root)


def test_a_socket_that_names_its_build_is_welcomed_with_the_servers(client: TestClient) -> None:
    t = create(client, "tiny")
    with client.websocket_connect(f"/ws/rooms/{t['code']}") as ws:
        ws.send_json({"auth": t["token"], "build": "0123456789ab"})
        assert ws.receive_json() == {"welcome": {"build": build_id(STATIC_DIR)}}
        assert "view" in ws.receive_json()
    # a client that does not say (an older one, a bot) gets the messages it knows
    with client.websocket_connect(f"/ws/rooms/{t['code']}") as ws:
        ws.send_json({"auth": t["token"]})
        assert "view" in ws.receive_json()
