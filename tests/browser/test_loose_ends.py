"""Loose ends a new group of friends met: the Posso rules page lists what each
hand asks for (the engine's own words), the lobby leaves out what the host
does not choose ("rules: 2"), the page that replays a downloaded game is
linked from My games, and "Sign in" is a finger-sized target on a phone."""

from __future__ import annotations

from app.games.posso.rules import REQUIREMENTS
from tests.browser.conftest import Pages, shoot
from tests.browser.play import create_room


def test_the_posso_rules_list_each_hands_requirement(pages: Pages) -> None:
    page = pages.open("/#rules/posso")
    page.wait_for_selector(".rule-hands li")
    items = page.eval_on_selector_all(".rule-hands li", "els => els.map(e => e.textContent)")
    assert len(items) == len(REQUIREMENTS) == 10
    for n, text in enumerate(items, start=1):
        req = REQUIREMENTS[n]
        assert text == f"Hand {n} ({req.deal} cards): {req.text}", text


def test_the_lobby_shows_only_the_house_rules_the_host_chooses(pages: Pages) -> None:
    page = pages.open("/")
    create_room(page, "Ann", "posso", options={"start_hand": "9"})
    page.wait_for_selector(".lobbypanel")
    text = page.inner_text(".lobbypanel")
    assert "Start at hand: 9" in text, text
    assert "Rules:" not in text and "rules:" not in text, text


def test_my_games_links_the_page_that_replays_a_saved_game(pages: Pages) -> None:
    page = pages.open("/#history")
    page.click("a.replay-link")
    page.wait_for_selector("h1:text-is('Open a saved game')")
    assert page.evaluate("() => location.hash") == "#replay"


def test_sign_in_is_finger_sized_on_a_phone(pages: Pages) -> None:
    page = pages.open("/", phone=True)
    button = page.locator("button.navbtn:text-is('Sign in')")
    button.wait_for()
    box = button.bounding_box()
    assert box is not None and box["width"] >= 44 and box["height"] >= 44, box
    shoot(page, "sign-in-phone")


def test_a_seats_name_is_whole_beside_its_badges_on_a_phone(pages: Pages) -> None:
    from app.games import GAMES
    from tests.browser.tables import draw, open_table

    game = GAMES["bigtwo"]
    state = game.new_game(4, {}, 7)
    (seat,) = game.to_act(state)
    page = open_table(pages, phone=True)
    names = ["Bot 1", "Bot 2", "Bot 3", "Bot 4"]
    draw(page, "bigtwo", game.view(state, seat), game.legal_actions(state, seat), names, seat)
    page.evaluate(
        """(me) => { window.ctx.room.seats.forEach((s, i) => { if (i !== me) Object.assign(s,
             { bot: true, level: 'strong' }); }); window.ctx.rerender(); }""",
        seat,
    )
    page.wait_for_timeout(200)
    shoot(page, "loose-ends-strong-bots-phone")
    assert page.locator(".opponents .chip.level").count() == 3
    cut = page.eval_on_selector_all(
        ".opponents .seat-name",
        "els => els.filter(e => e.scrollWidth > e.clientWidth + 0.5).map(e => e.textContent)",
    )
    assert not cut, f"names cut short: {cut}"


def test_a_log_shown_after_being_drawn_hidden_opens_at_its_newest_line(pages: Pages) -> None:
    """A phone's log after a refresh: drawn into a closed panel, it opens at
    its newest line, not its oldest; scrolled back by the reader, it stays."""
    page = pages.open("/", phone=True)
    page.wait_for_selector("#create-name")
    at_end = page.evaluate(
        """async () => {
          const { logPanel } = await import('/js/log.js');
          const frame = () => new Promise(
            (r) => requestAnimationFrame(() => requestAnimationFrame(r)));
          const box = document.createElement('div');
          box.style.cssText = 'display:none; height:200px';
          document.body.append(box);
          const log = logPanel();
          log.el.style.height = '200px';
          box.append(log.el);
          for (let i = 0; i < 80; i++) log.add(`line ${i}`);
          box.style.display = 'flex';
          await frame();
          const list = log.el.querySelector('.lines');
          const end = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
          list.scrollTop = 0;
          await frame();
          log.el.style.height = '240px';
          await frame();
          return [end, list.scrollTop === 0, list.scrollHeight > list.clientHeight];
        }"""
    )
    assert at_end == [True, True, True], at_end
