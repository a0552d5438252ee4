"""The HTTP layer the package's web apps share: the server (`..server`), its chat page
(`..playground`) and the trace viewer (`..traces.viewer`). Each imports from here, none from
another.

    hosts.py     which `Host` a local server answers (DNS rebinding), and the check
    pages.py     a page's static assets and the headers every page's response carries
    refusals.py  a refused request: its status and its `{"error": {...}}` body
    bodies.py    a request body read within its size and time limits, and parsed as JSON
    keys.py      bearer keys: the check, and the hash that names a key's holder
    static/      what every page loads: markdown.js (the safe Markdown renderer) and its css

Nothing here imports Starlette on import of the package: the server's config reads
`hosts.allowed_name` without the `server` extra.
"""
