"""Submit one year's samples, as `python multicrab.py 2018` would with CRAB."""
import sys

from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from CRABClient.UserUtilities import config

SAMPLES = {
    '2017': {'DYJets': '/DYJetsToLL_M-50_TuneCP5_13TeV-madgraphMLM-pythia8/RunIIFall17MiniAODv2-PU2017_12Apr2018_94X_mc2017_realistic_v14-v1/MINIAODSIM'},
    '2018': {'DYJets': '/DYJetsToLL_M-50_TuneCP5_13TeV-madgraphMLM-pythia8/RunIIAutumn18MiniAOD-102X_upgrade2018_realistic_v15-v1/MINIAODSIM',
             'WJets': '/WJetsToLNu_TuneCP5_13TeV-madgraphMLM-pythia8/RunIIAutumn18MiniAOD-102X_upgrade2018_realistic_v15-v2/MINIAODSIM'},
}


def make_config(year, sample, dataset):
    cfg = config()
    cfg.General.requestName = '%s_%s' % (sample, year)
    cfg.General.workArea = 'crab_projects'
    cfg.JobType.pluginName = 'Analysis'
    cfg.JobType.psetName = 'pset.py'
    cfg.Data.inputDataset = dataset
    cfg.Data.splitting = 'FileBased'
    cfg.Data.unitsPerJob = 1
    cfg.Data.totalUnits = 2
    cfg.Site.storageSite = 'T2_CH_CERN'
    cfg.Debug.timeScale = 100  # crabtui's: 100 simulated seconds a second
    return cfg


if __name__ == '__main__':
    year = sys.argv[1] if len(sys.argv) > 1 else '2018'
    for sample, dataset in SAMPLES[year].items():
        try:
            crabCommand('submit', config=make_config(year, sample, dataset))
        except ClientException as error:
            print('Failed submitting %s %s: %s' % (sample, year, error))
