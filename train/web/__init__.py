"""``truc serve``: a local web table to play against any agent, watch agents play and replay records.

``app.py`` is the JSON API and serves the page (``static/``: one HTML, one script, one style sheet,
no build step); ``table.py`` holds a game and what a seat sees of it; ``levels.py`` names the
opponents. Needs the ``web`` extra (Starlette and uvicorn): ``pip install 'truc-env[web]'``.
"""
