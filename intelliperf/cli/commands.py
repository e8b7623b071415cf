"""The command table: every subcommand put on the app, in the order `intelliperf --help` lists them."""

from __future__ import annotations

from .app import COMMAND_SETTINGS, app
from .campaign import campaign
from .diagnosis import diagnose, regions
from .evaluate import evaluate, tune
from .listings import formulas, rewriters, schema
from .optimize import optimize

# The ones that run a program (`-- CMD [ARGS]...`) stop reading options at its first word.
app.command(context_settings=COMMAND_SETTINGS)(diagnose)
app.command(context_settings=COMMAND_SETTINGS)(optimize)
app.command(context_settings=COMMAND_SETTINGS)(regions)
app.command(name="eval")(evaluate)
app.command()(campaign)
app.command()(tune)
app.command()(formulas)
app.command()(rewriters)
app.command()(schema)

__all__ = ["app"]
