#!/usr/bin/env python3
"""Submit the 2022 Drell-Yan samples, two at a time: python3 submit_all.py

Each task is built by make_config() and submitted from a worker of a multiprocessing Pool."""
from multiprocessing import Pool

from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from CRABClient.UserUtilities import config as new_config

SAMPLES = {
    'DYto2Mu_MLL-50to120': '/DYto2Mu_MLL-50to120_TuneCP5_13p6TeV_powheg-pythia8/Run3Summer22MiniAODv4-130X_mcRun3_2022_realistic_v5-v2/MINIAODSIM',
    'DYto2E_MLL-50to120': '/DYto2E_MLL-50to120_TuneCP5_13p6TeV_powheg-pythia8/Run3Summer22MiniAODv4-130X_mcRun3_2022_realistic_v5-v2/MINIAODSIM',
}


def make_config(name, dataset):
    cfg = new_config()
    cfg.General.requestName = 'zpeak22_' + name.replace('-', '_')
    cfg.General.workArea = 'crab_zpeak22'
    cfg.JobType.psetName = 'zpeak_cfg.py'
    cfg.Data.inputDataset = dataset
    cfg.Data.splitting = 'FileBased'
    cfg.Data.unitsPerJob = 4
    cfg.Data.totalUnits = 8
    cfg.Data.publication = False
    cfg.Site.storageSite = 'T2_IT_Pisa'
    return cfg


def submit(item):
    name, dataset = item
    try:
        result = crabCommand('submit', config=make_config(name, dataset))
        return '%s -> %s' % (name, result['uniquerequestname'])
    except ClientException as error:
        return '%s failed: %s' % (name, error)


if __name__ == '__main__':
    with Pool(2) as workers:
        for line in workers.map(submit, sorted(SAMPLES.items())):
            print(line)
