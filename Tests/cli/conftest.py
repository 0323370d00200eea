"""What every CLI test shares."""
import pytest


@pytest.fixture(autouse=True)
def checkout(tmp_path):
    """Each test's scratch directory is a checkout, as users' manifests live in one: fcmctl reads manifests,
    includes and device files only inside the repository (the directory holding .git). Tests of that rule
    make their own layout below it (test_paths_confined.py)."""
    (tmp_path / ".git").mkdir()
    return tmp_path
