"""Energy: exact action counts from the models times per-action energies from the platform's
`energy:` tables (docs/energy.md)."""
