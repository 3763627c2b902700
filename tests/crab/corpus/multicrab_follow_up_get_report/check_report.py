#!/usr/bin/env python
# Check that a finished CRAB task processed what it had to, before its output is used:
# crab report for the lumis and events, and crab getoutput --dump for the files on storage.
import argparse
import json
import os
import sys

from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException

parser = argparse.ArgumentParser(description='Check the report and the outputs of a CRAB task')
parser.add_argument('-d', dest='dir', required=True, help='CRAB project directory')
parser.add_argument('-r', action='store_true', help='also run crab report')
parser.add_argument('--jobs', default=None, help='only copy the outputs of these jobs, e.g. 1-3,5')
parser.add_argument('--dest', default=None, help='where to copy them')
args = parser.parse_args()

dirToCheck = args.dir

##############  Check REPORT
reportOut = None
nEvtsRead = -1
lumiProcessedFile = None
if args.r:
    try:
        reportOut = crabCommand('report', dir=dirToCheck)
        nEvtsRead = reportOut['numEventsRead']
        lumiProcessedFile = '%s/%s/%s' % (os.getcwd(), dirToCheck, 'results/processedLumis.json')
    except ClientException as e:
        print('crab report failed: %s' % e)
        sys.exit(1)
    with open(lumiProcessedFile) as f:
        processed = json.load(f)
    nLumis = sum(last - first + 1 for ranges in processed.values() for first, last in ranges)
    print('events read: %d' % nEvtsRead)
    print('files processed: %d' % reportOut['numFilesProcessed'])
    print('lumis processed: %d in %d runs' % (nLumis, len(processed)))
    print('lumis not processed: %d' % sum(last - first + 1 for ranges in reportOut['notProcessedLumis'].values()
                                           for first, last in ranges))
    if reportOut['processedLumis'] != processed:
        print('WARNING: processedLumis.json differs from what crab report returned')

##############  Check OUTPUT on storage
dump = crabCommand('getoutput', '--dump', dir=dirToCheck)
print('output files on storage: %d' % len(dump['lfn']))
for lfn in dump['lfn']:
    print('  %s' % lfn)

if args.jobs:
    kwargs = {'jobids': args.jobs}
    if args.dest:
        kwargs['outputpath'] = args.dest
    try:
        got = crabCommand('getoutput', dir=dirToCheck, **kwargs)
    except ClientException as e:
        print('crab getoutput failed: %s' % e)
        sys.exit(1)
    print('copied: %s' % ' '.join(sorted(got['success'])))
    if got['failed']:
        print('not copied: %s' % ' '.join(sorted(got['failed'])))
