"""Configuration: the settings (the only reader of the environment) and secrets fetched by name."""
