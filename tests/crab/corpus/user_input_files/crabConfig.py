from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'skim_private_ntuples_2017'
config.General.workArea = 'crab_skims'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'skim_cfg.py'

config.Data.userInputFiles = [
    '/store/user/someone/ntuples/2017/QCD_HT700to1000/ntuple_1.root',
    '/store/user/someone/ntuples/2017/QCD_HT700to1000/ntuple_2.root',
    '/store/user/someone/ntuples/2017/QCD_HT700to1000/ntuple_3.root',
    '/store/user/someone/ntuples/2017/QCD_HT700to1000/ntuple_4.root',
    '/store/user/someone/ntuples/2017/QCD_HT700to1000/ntuple_5.root',
]
config.Data.outputPrimaryDataset = 'QCD_HT700to1000_TuneCP5_13TeV-madgraphMLM-pythia8'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 1
config.Data.publication = False

config.Site.whitelist = ['T2_CH_CERN']
config.Site.storageSite = 'T2_CH_CERN'
