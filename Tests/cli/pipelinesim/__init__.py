"""A pipeline simulator: GitHub Actions workflows run from their YAML against local stand-ins."""
