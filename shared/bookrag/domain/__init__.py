"""The domain, free of SDKs and frameworks: chunk payloads and hits, query limits, thresholds."""
