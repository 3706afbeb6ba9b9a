"""Case recipes -> ECS documents: estate, background activity, attack chains, planted content."""
