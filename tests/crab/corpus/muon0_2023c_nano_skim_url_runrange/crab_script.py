#!/usr/bin/env python3
# NanoAOD-tools' post-processor needs CMSSW; without it, the job reads what the sandbox gives it
# (PSet.py, the branch selection, haddnano.py) and writes the skimmed tree.
import os
import sys

branches = [line.split()[1] for line in open('keep_and_drop_dimuon.txt') if line.startswith('keep')]
assert os.path.exists('PSet.py') and os.path.exists('haddnano.py')
print('post-processing job %s keeping %s' % (sys.argv[1], ' '.join(branches)))
with open('tree.root', 'w') as tree:
    tree.write('skimmed\n')
