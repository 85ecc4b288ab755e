// Placeholder until this stage lands; see the module's issue.
