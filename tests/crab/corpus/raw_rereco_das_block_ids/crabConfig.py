import CRABClient
from CRABClient.UserUtilities import config

config = config()

# Re-RECO of the two blocks of JetMET1 2023C that the prompt pass lost (block ids copied from DAS)
config.General.requestName = 'JetMET1_Run2023C_reRECO_lostBlocks'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'Data_Run2023_RECO.py'
config.JobType.maxMemoryMB = 2000

config.Data.inputDataset = '/JetMET1/Run2023C-v1/RAW'
config.Data.inputDBS = 'global'
# config.Data.splitting = 'Automatic'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 1
config.Data.publication = False
config.Data.inputBlocks = ['/JetMET1/Run2023C-v1/RAW#b83949de-530b-4b1c-834a-d91269020eaa',
                           'e1f0a7c2-5d3b-4c8e-9f21-6a7b3c9d0e14']
# config.Data.partialDataset = True
# config.Site.whitelist=["T1_RU*", "T1_US*"]

config.Site.storageSite = "T2_AT_Vienna"
