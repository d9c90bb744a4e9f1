"""What the consumer checks share: a staged install of shaped, and running the program built against it."""
import pathlib
import subprocess


def stage_install(build, stage):
    """`meson install` of the build directory into the folder stage (its --destdir), without rebuilding."""
    subprocess.run(["meson", "install", "-C", str(build), "--destdir", str(stage), "--no-rebuild", "--quiet"],
                   check=True)


def prints_expected(exe, expected, how):
    """Runs exe; True when it printed the text of the file expected, else says what it printed instead."""
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    if out != pathlib.Path(expected).read_text():
        print(f"the program built {how} printed something else:\n" + out)
        return False
    return True
