#!/usr/bin/env python3
# NanoAOD-tools' post-processor needs CMSSW; without it, the job reads the branch selection the
# sandbox gives it and says what it would keep.
import sys

keep = [line.split()[1] for line in open('keep_and_drop.txt') if line.startswith('keep')]
print('job %s: PostProcessor(".", inputFiles(), outputbranchsel="keep_and_drop.txt") keeps %s'
      % (sys.argv[1], ', '.join(keep)))
