import FWCore.ParameterSet.Config as cms
process = cms.Process('Ana')
process.TFileService = cms.Service('TFileService', fileName=cms.string('BsPhiPhi_ntuple.root'))
