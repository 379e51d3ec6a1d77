"""The HTTP routes, thin: validate with the contract's model, call a service, return its shape."""
