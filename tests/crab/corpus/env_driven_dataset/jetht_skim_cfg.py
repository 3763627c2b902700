import FWCore.ParameterSet.Config as cms
process = cms.Process('SKIM')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
