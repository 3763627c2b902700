#!/usr/bin/env python
"""Submit the 2018 top samples: python multicrab.py (crab submit multicrab.py submits the first)."""
from CRABClient.UserUtilities import config
from CRABClient.ClientExceptions import ClientException

config = config()
config.General.workArea = 'crab_top2018'
config.General.transferOutputs = True
config.General.requestName = 'top2018_TTTo2L2Nu'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'top_cfg.py'
config.JobType.pyCfgParams = ['year=2018']

config.Data.inputDataset = '/TTTo2L2Nu_TuneCP5_13TeV-powheg-pythia8/RunIISummer20UL18MiniAODv2-106X_upgrade2018_realistic_v16_L1v1-v1/MINIAODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Data.publication = False

config.Site.storageSite = 'T2_CH_CERN'

SAMPLES = {
    'TTTo2L2Nu': '/TTTo2L2Nu_TuneCP5_13TeV-powheg-pythia8/RunIISummer20UL18MiniAODv2-106X_upgrade2018_realistic_v16_L1v1-v1/MINIAODSIM',
    'ST_tW_top': '/ST_tW_top_5f_inclusiveDecays_TuneCP5_13TeV-powheg-pythia8/RunIISummer20UL18MiniAODv2-106X_upgrade2018_realistic_v16_L1v1-v2/MINIAODSIM',
}

if __name__ == '__main__':
    from CRABAPI.RawCommand import crabCommand
    from http.client import HTTPException
    from multiprocessing import Process

    def submit(cfg):
        try:
            crabCommand('submit', config=cfg)
        except HTTPException as hte:
            print("Failed submitting task: %s" % (hte.headers))
        except ClientException as cle:
            print("Failed submitting task: %s" % (cle))

    for name, dataset in SAMPLES.items():
        config.General.requestName = 'top2018_' + name
        config.Data.inputDataset = dataset
        p = Process(target=submit, args=(config,))
        p.start()
        p.join()
