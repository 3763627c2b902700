from WMCore.Configuration import Configuration

config = Configuration()

config.section_("General")
config.General.requestName = "Run3_ppRef_QCDDijet30_DIGI_fromFileList"  # one DIGI pass over the private GEN-SIM
config.General.transferLogs = False

config.section_("JobType")
config.JobType.pluginName = "Analysis"
config.JobType.psetName = "step2_DIGI_L1_DIGI2RAW.py"
config.JobType.numCores = 8
config.JobType.maxMemoryMB = 20000    # the most an 8-thread job may ask for
config.JobType.maxJobRuntimeMin = 2880  # two days: pile-up mixing is slow

config.section_("Data")
# the GEN-SIM step was never published, so its outputs are read back from a plain list of LFNs
config.Data.userInputFiles = open("ppRef_QCDDijet30_GENSIM_files.txt").readlines()
config.Data.splitting = "FileBased"
config.Data.unitsPerJob = 1
config.Data.totalUnits = -1
config.Data.publication = False
config.Data.outputDatasetTag = ""
config.Data.outLFNDirBase = "/store/user/someone/run3/ppRef_QCDDijet30_DIGI/"

config.section_("Site")
config.Site.storageSite = "T2_US_MIT"
config.Site.whitelist = ["T2_CH_CERN"]

config.section_("Debug")
config.Debug.extraJDL = ["+CMS_ALLOW_OVERFLOW=False"]
