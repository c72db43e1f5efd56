#!/usr/bin/env python3
"""Checks docs/deploy/node-problem-detector/gpunoise-doctor-monitor.json.

1. Validates it the way node-problem-detector's custom plugin monitor does
   (pkg/custompluginmonitor/types/config.go: ApplyConfiguration, Validate):
   plugin "custom", durations that Go's time.ParseDuration accepts, rule
   timeouts not above the global timeout, rule types, and a default condition
   for every permanent rule.
2. Runs every rule's command (the given gpunoise binary, "/host" replaced by a
   fixture root) on an ok, a warning and a failing fixture, maps the exit
   status as NPD does (0 OK, 1 NonOK, anything else Unknown) and checks the
   status and the message NPD would show (stdout, trimmed, cut at
   max_output_length).

usage: check_npd_config.py CONFIG GPUNOISE OK_ROOT WARN_ROOT FAIL_ROOT
"""
import json
import re
import subprocess
import sys

GO_DURATION = re.compile(r'^([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$')
UNITS = {'ns': 1e-9, 'us': 1e-6, 'µs': 1e-6, 'ms': 1e-3, 's': 1, 'm': 60, 'h': 3600}


def seconds(text):
    assert GO_DURATION.match(text), f'not a Go duration: {text!r}'
    return sum(float(n) * UNITS[u] for n, _, u in re.findall(r'([0-9]+(\.[0-9]*)?)(ns|us|µs|ms|s|m|h)', text))


def validate(cfg):
    assert cfg['plugin'] == 'custom', cfg['plugin']
    glob = cfg['pluginConfig']
    global_timeout = seconds(glob.get('timeout', '5s'))
    interval = seconds(glob.get('invoke_interval', '30s'))
    assert global_timeout <= interval, 'a run must end before the next starts'
    assert isinstance(glob.get('max_output_length', 80), int)
    assert cfg['source']
    conditions = {c['type'] for c in cfg['conditions']}
    for c in cfg['conditions']:
        assert c['type'] and c['reason'] and c['message'], c
    assert cfg['rules'], 'no rules'
    for rule in cfg['rules']:
        assert rule['type'] in ('temporary', 'permanent'), rule
        assert rule['reason'], rule
        assert rule['path'].startswith('/'), rule
        if 'timeout' in rule:
            assert seconds(rule['timeout']) <= global_timeout, 'plugin timeout is greater than global timeout'
            # doctor's own sampling must fit in the timeout
        if rule['type'] == 'permanent':
            assert rule['condition'] in conditions, f'no default condition for {rule["condition"]}'
        args = rule['args']
        assert args[0] == 'doctor', args
        # Without NPD exit codes a failure exits 2, which NPD reads as Unknown.
        assert '--exit-codes' in args and args[args.index('--exit-codes') + 1] == 'npd', args
        assert '--summary' in args, 'NPD shows stdout as the message: one line'
    return glob.get('max_output_length', 80)


def npd_status(code):
    return {0: 'OK', 1: 'NonOK'}.get(code, 'Unknown')


def run_rules(cfg, gpunoise, roots, max_len):
    for rule in cfg['rules']:
        args = rule['args']
        problem_at = args[args.index('--problem-at') + 1] if '--problem-at' in args else 'fail'
        expected = {'ok': 'OK', 'warn': 'NonOK' if problem_at == 'warn' else 'OK', 'fail': 'NonOK'}
        for kind, root in roots.items():
            argv = [gpunoise] + [root if a == '/host' else a for a in args]
            p = subprocess.run(argv, capture_output=True, text=True, timeout=seconds(rule.get('timeout', '5s')))
            status = npd_status(p.returncode)
            message = p.stdout.strip()[:max_len]
            assert status == expected[kind], (rule['reason'], kind, p.returncode, p.stdout, p.stderr)
            assert message.startswith({'ok': 'ok (', 'warn': 'warn: ', 'fail': 'fail: '}[kind]), (kind, message)
            print(f'{rule["reason"]} on {kind}: exit {p.returncode} -> {status}: {message}')


def main():
    config, gpunoise, ok_root, warn_root, fail_root = sys.argv[1:6]
    with open(config) as f:
        cfg = json.load(f)
    max_len = validate(cfg)
    run_rules(cfg, gpunoise, {'ok': ok_root, 'warn': warn_root, 'fail': fail_root}, max_len)


if __name__ == '__main__':
    main()
