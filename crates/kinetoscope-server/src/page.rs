//! The app page served at `GET /`. The web UI proper is `kinetoscope_report::web_app_html`
//! (its own branch); until it lands, this placeholder, under the same name, lists the
//! runs and links their JSON so the server can be used and tested.

/// The page: a minimal list of runs, fetched with the token from the page's URL.
pub fn web_app_html() -> String {
    r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kinetoscope</title></head>
<body>
<h1>kinetoscope</h1>
<p>The web UI is not built into this binary yet; the API is served (docs/api.md).</p>
<ul id="runs"></ul>
<script>
const token = new URLSearchParams(location.search).get("token") || "";
fetch("/api/v1/runs", {headers: {Authorization: "Bearer " + token}})
  .then(r => r.json())
  .then(d => {
    const ul = document.getElementById("runs");
    for (const run of d.runs || []) {
      const li = document.createElement("li");
      li.textContent = run.name + " (" + run.kind + ", " + run.workers.length + " workers)";
      ul.appendChild(li);
    }
  });
</script>
</body></html>
"#
    .to_owned()
}
