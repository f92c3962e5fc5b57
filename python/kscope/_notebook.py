"""What kscope does differently inside a Jupyter kernel: figures are shown inline."""

import io


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
