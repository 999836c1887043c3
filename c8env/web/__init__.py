"""A local web page to play and watch Crazy Eights: ``c8env serve`` (the ``web`` extra).

- :mod:`c8env.web.seat_view`: what one seat may see of a state, as JSON data;
- :mod:`c8env.web.games`: the games the server keeps (state, agents, log, replay), no web framework;
- :mod:`c8env.web.app`: the FastAPI application (JSON API and the static page);
- :mod:`c8env.web.serve`: the ``c8env serve`` command;
- :mod:`c8env.web.loadtest`: many concurrent games against a local server, requests/s and latency;
- :mod:`c8env.web.soak`: games kept going against a local server for minutes: errors, latency, memory.

Importing this package needs no FastAPI; only :mod:`c8env.web.app` does.
"""
