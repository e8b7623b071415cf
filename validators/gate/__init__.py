"""The static source gate, in intelliperf's process before anything runs: what candidate code may contain
(an allow-list), checked on its source.

    policy          the entry: `check(original, candidate)`, `check_statement`, `check_module_item`,
                    `PolicyError`; grandfathers what the original already had
    policy_checker  the visitor that records each construct outside the allow-list, with its reason
    policy_scope    what a name in candidate code is (local, an allow-list root, a builtin, the program's)
    policy_syntax   small readers of the syntax tree the others share
    allow_list      the allowed names, attributes, decorators and imports, as literal sets

Standard library only. Its modules are the API."""

__all__ = ["allow_list", "policy", "policy_checker", "policy_scope", "policy_syntax"]
