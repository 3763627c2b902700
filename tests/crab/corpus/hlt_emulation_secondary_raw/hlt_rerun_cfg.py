import FWCore.ParameterSet.Config as cms

process = cms.Process('HLTX')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring(), secondaryFileNames=cms.untracked.vstring())
