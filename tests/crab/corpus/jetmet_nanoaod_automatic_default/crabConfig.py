from CRABClient.UserUtilities import config

config = config()

config.General.requestName = 'JetMET_Run2022G_dijet_skim'
config.General.workArea = 'crab_dijet'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'nano_skim_cfg.py'
config.JobType.inputFiles = ['keep_and_drop.txt']
config.JobType.outputFiles = ['skim.root']

config.Data.inputDataset = '/JetMET/Run2022G-PromptNanoAODv11_v1-v2/NANOAOD'
config.Data.publication = False
# Data.splitting is left to CRAB's default (Automatic, 8-hour jobs)

config.Site.storageSite = 'T2_IT_Pisa'
