"""Layer beside the stack: tools for a real account (doctor, kubeconfig, rotation). They read the package, never the offline tooling."""
