"""Developer tools: the CLI, the demo, Docker-free local invoke, the evaluation harness."""
