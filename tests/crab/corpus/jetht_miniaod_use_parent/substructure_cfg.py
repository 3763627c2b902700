import FWCore.ParameterSet.Config as cms

process = cms.Process('SUBSTRUCTURE')
process.source = cms.Source('PoolSource',
    fileNames=cms.untracked.vstring(),
    secondaryFileNames=cms.untracked.vstring(),  # the AOD parents, filled in by CRAB
)
