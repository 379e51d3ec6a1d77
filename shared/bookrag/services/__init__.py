"""Services: the container that builds every client once per process, and the operations behind each interface."""
