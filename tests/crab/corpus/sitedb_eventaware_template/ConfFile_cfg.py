import FWCore.ParameterSet.Config as cms
process = cms.Process('VLF')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
process.TFileService = cms.Service('TFileService', fileName=cms.string('vlf_tree.root'))
