// Optional accounts in the top bar: nobody needs one to play; signing in keeps
// one's past games together across browsers.
import { h, mount, toast } from "./dom.js";
import { api } from "./api.js";

export function showAccount(slot) {
  if (!slot) return;
  const refresh = () =>
    api("/api/me")
      .then((me) => draw(me))
      .catch(() => mount(slot)); // no accounts on this server: show nothing
  const draw = (me) => {
    if (me && me.signed_in) {
      mount(slot,
        h("span.acct", me.account.name),
        " ",
        h("button.link.navbtn", {
          onclick: async () => {
            await api("/api/accounts/signout", { method: "POST" }).catch((e) => toast(e.message, "error"));
            refresh();
            window.dispatchEvent(new Event("cardroom:account"));
          },
        }, "Sign out"));
    } else {
      mount(slot, h("button.link.navbtn", { onclick: () => openDialog(refresh) }, "Sign in"));
    }
  };
  refresh();
}

function openDialog(done) {
  const name = h("input", { type: "text", id: "acct-name", autocomplete: "username", maxlength: 40, required: true });
  const pw = h("input", { type: "password", id: "acct-pw", autocomplete: "current-password", required: true });
  const err = h("p.err", { role: "alert" });
  const submit = async (path) => {
    err.textContent = "";
    try {
      await api(path, { method: "POST", body: { name: name.value.trim(), password: pw.value } });
      dlg.close();
      dlg.remove();
      toast("Signed in. Your games on this browser are now kept with your account.");
      done();
      window.dispatchEvent(new Event("cardroom:account"));
    } catch (e) {
      err.textContent = e.message;
    }
  };
  const dlg = h("dialog.acctdlg", { "aria-labelledby": "acct-h" },
    h("form", { method: "dialog", onsubmit: (e) => { e.preventDefault(); submit("/api/accounts/signin"); } },
      h("h2", { id: "acct-h" }, "Sign in"),
      h("p.muted", "Optional: an account keeps your past games and score sheets together on any browser."),
      h("label.field", { for: "acct-name" }, h("span.label", "Name"), name),
      h("label.field", { for: "acct-pw" }, h("span.label", "Password"), pw),
      err,
      h("div.row",
        h("button.primary", { type: "submit" }, "Sign in"),
        h("button", { type: "button", onclick: () => submit("/api/accounts/signup") }, "Create account"),
        h("button", { type: "button", onclick: () => { dlg.close(); dlg.remove(); } }, "Cancel")),
    ));
  document.body.append(dlg);
  dlg.showModal();
  name.focus();
}
