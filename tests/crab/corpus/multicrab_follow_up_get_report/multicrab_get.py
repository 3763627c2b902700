#!/usr/bin/env python
'''
Usage: multicrab_get.py <multicrab dir> [<multicrab dir> ...]

For every CRAB task directory under the given directories: ask crab status, fetch the
output of the finished jobs that is not yet in results/, fetch the short logs of the failed
jobs so one can see why they failed, resubmit those, and print a summary per task.
'''
import glob
import os
import sys

try:
    from CRABAPI.RawCommand import crabCommand
    from CRABClient.ClientExceptions import ClientException
except ImportError:
    print('ERROR: cannot load the CRAB API; source /cvmfs/cms.cern.ch/common/crab-setup.sh first')
    sys.exit(1)
try:
    from httplib import HTTPException
except ImportError:
    from http.client import HTTPException


def task_dirs(parents):
    found = []
    for parent in parents:
        for path in sorted(glob.glob(os.path.join(parent, 'crab_*'))):
            if os.path.isdir(os.path.join(path, 'results')):
                found.append(path)
    return found


def retrieved_outputs(task_dir):
    return {f.rsplit('_', 1)[-1].split('.')[0] for f in os.listdir(os.path.join(task_dir, 'results'))
            if f.endswith('.root')}


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(1)
    summary = []
    for d in task_dirs(sys.argv[1:]):
        name = os.path.basename(d)
        try:
            res = crabCommand('status', dir=d)
        except (ClientException, HTTPException) as e:
            print('%s: crab status failed: %s' % (name, e))
            summary.append((name, '?', '?', '?'))
            continue
        finished = [j for s, j in res['jobList'] if s == 'finished']
        failed = [j for s, j in res['jobList'] if s == 'failed']
        missing = [j for j in finished if j not in retrieved_outputs(d)]
        if missing:
            out = crabCommand('getoutput', dir=d, jobids=','.join(missing))
            print('%s: retrieved %d output files, %d failed' % (name, len(out['success']), len(out['failed'])))
        if failed:
            logs = crabCommand('getlog', dir=d, jobids=','.join(failed), short=True)
            print('%s: short logs of failed jobs: %s' % (name, ' '.join(sorted(logs['success']))))
            crabCommand('resubmit', dir=d)
            print('%s: resubmitted jobs %s' % (name, ','.join(failed)))
        summary.append((name, len(res['jobList']), len(retrieved_outputs(d)), res['status']))
    print('%-40s %6s %10s  %s' % ('Task', 'Jobs', 'Retrieved', 'Status'))
    for row in summary:
        print('%-40s %6s %10s  %s' % row)


if __name__ == '__main__':
    main()
