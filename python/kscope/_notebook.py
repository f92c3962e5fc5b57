"""What kscope does differently inside a Jupyter kernel: figures shown inline, live progress."""

import io
import sys


def in_notebook():
    """True inside a Jupyter kernel (ipykernel's ZMQInteractiveShell), not in a terminal IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def show_figure(fig):
    """Displays a matplotlib Figure inline as PNG: rendered here, so it needs neither pyplot nor the
    kernel's matplotlib backend."""
    from IPython.display import Image, display

    png = io.BytesIO()
    fig.savefig(png, format="png", bbox_inches="tight")
    display(Image(data=png.getvalue(), format="png"))


def _progress_bar_class():
    """tqdm's widget bar where ipywidgets can draw it, its text bar otherwise (what tqdm.auto picks,
    without its warning), None without tqdm."""
    try:
        import ipywidgets  # noqa: F401
        from tqdm.notebook import tqdm
    except ImportError:
        try:
            from tqdm import tqdm
        except ImportError:
            return None
    return tqdm


def _seconds(s):
    return "--" if s is None else f"{s:.1f} s"


class NotebookProgress:
    """The engine's progress observer in a notebook (whose stderr is no terminal, so the engine would
    print one line per config only after it ends): a bar over all body calls with the config in
    progress and the ETA, or plain lines at most once a second without tqdm."""

    LINE_INTERVAL_S = 1.0

    def __init__(self, bar_class, out):
        self._bar_class = bar_class
        self._out = out
        self._bar = None
        self._last_line = None

    def __call__(self, event, state):
        label = f"config {state['config_index'] + 1}/{state['total_configs']}"
        if state["config_text"]:
            label += f" ({state['config_text']})"
        if self._bar_class is not None:
            self._draw_bar(event, state, label)
        else:
            self._write_line(event, state, label)

    def _draw_bar(self, event, state, label):
        if self._bar is None:
            self._bar = self._bar_class(total=state["total_configs"] * state["runs_per_config"], unit="run",
                                        desc="kscope", file=self._out, leave=True)
        self._bar.set_postfix_str(f"{label}: run {state['config_runs_done']}/{state['runs_per_config']}",
                                  refresh=False)
        self._bar.update(state["runs_done"] - self._bar.n)
        if event == "sweep_finished":
            self.close()

    def _write_line(self, event, state, label):
        if event == "run_finished" and self._last_line is not None and \
                state["elapsed_s"] - self._last_line < self.LINE_INTERVAL_S:
            return
        self._last_line = state["elapsed_s"]
        if event == "sweep_finished":
            text = f"profiled {state['total_configs']} configs in {_seconds(state['elapsed_s'])}"
        else:
            text = (f"{label}: run {state['config_runs_done']}/{state['runs_per_config']}, elapsed "
                    f"{_seconds(state['elapsed_s'])}, ETA {_seconds(state['eta_s'])}")
        print(f"[kscope] {text}", file=self._out, flush=True)

    def close(self):
        """Ends the bar (also after a failed or interrupted sweep)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def progress_display(show):
    """The progress observer of a profiled call: a NotebookProgress when shown in a notebook, None
    (the engine's own progress on stderr) otherwise."""
    if not (show and in_notebook()):
        return None
    return NotebookProgress(_progress_bar_class(), sys.stderr)
